"""`CompiledModel`: a compiled model, called like the original module; `load` reads one back."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

from dycl.arguments import ABSENT, ObjectArgument, Parameter, bind, describe, flatten
from dycl.arguments import key as argument_key
from dycl.diagnostics import DyclError, FallbackWarning, InputError, user_stacklevel
from dycl.grad_modes import current_grad_mode
from dycl.pyregion import load_model, to_torch
from dycl.runtime.live_guard import LiveModelGuard
from dycl.runtime.artifact import check
from dycl.runtime.host_support import RegionMismatch
from dycl.signature import Signature

# How many other input shapes a model compiled with dynamic="auto" compiles on demand.
MAX_SPECIALIZATIONS = 8

_loaded = 0


def _eager_beyond_guards(fn: Callable[..., Any], name: str, module: Any, model: Any) -> Callable[..., Any]:
    """`fn`, or at sizes its build does not hold for (a data-dependent size of 1 a
    size-oblivious export excluded) the sub-DNN's own torch graph, run eagerly: a
    model compiled here takes every size eager takes. (A loaded artifact has no
    torch graph: there such a size stays an error.)"""
    from dycl.runtime.host_support import SizeGuardError

    graph: list[Any] = []

    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except SizeGuardError as e:
            if not graph:
                from xdsl.dialects import func

                from dycl.fx import computes_in_double, to_graph_module

                op = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
                graph.append((to_graph_module(op, model), torch.float64 if computes_in_double(op) else torch.float32))
                warnings.warn(f"{str(e).split(';')[0]}: it runs as its eager torch graph at such sizes",
                              FallbackWarning, stacklevel=user_stacklevel())
            gm, floats = graph[0]
            inputs = [torch.tensor(a, dtype=floats if isinstance(a, float) else None)
                      if isinstance(a, (bool, int, float)) else to_torch(a) for a in args]
            with torch.no_grad():
                out = gm(*inputs)
            return [o.contiguous() if isinstance(o, torch.Tensor) else o for o in out]

    return call


def _import_host(path: Path) -> Any:
    global _loaded
    _loaded += 1
    name = f"dycl_host_{_loaded}"
    spec = importlib.util.spec_from_file_location(name, path / "host.py")
    if spec is None or spec.loader is None:
        raise DyclError(f"'{path}' has no host.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_SIZE_SCOPE = {"__builtins__": {}, "max": max, "min": min, "abs": abs}


class _EagerCall:
    """A specialization not compiled: calls run the model as eager Python."""

    def __init__(self, compiled: CompiledModel, why: str) -> None:
        self.compiled, self.why = compiled, why

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled._eager(args, None, self.why, kwargs)


class CompiledModel:
    """A compiled dynamic model: call it like the original module.

    Safe to call from several threads: calls are serialised (one at a time), since
    the runtimes' sessions and VMs are not re-entrant and fallback regions run the
    model's own Python on the model itself. For parallel throughput, load one
    CompiledModel per thread (`dycl.load(path)`).
    """

    def __init__(self, path: str | Path, module: Any = None, report: Any = None, model: Any = None):
        self.path = Path(path).resolve()  # (a relative path stays this artifact after a chdir)
        self._model = model  # the live model, for fallback regions (else unpickled from the artifact)
        # Compiled here from a live model: a change to what the compile built in
        # (weights, training flags, folded attributes) makes calls run it as eager.
        reads = getattr(report, "folded_reads", None)
        self._guard = LiveModelGuard(model, reads) if model is not None and reads is not None else None
        self.manifest = check(self.path)  # every file as dycl wrote it, before any of it runs
        self.host = _import_host(self.path)
        self._program: Any = None
        self._expected: list[tuple[torch.Size, torch.dtype]] | None = None
        # Where inputs may live: the CPU, and the GPU for a CUDA artifact (never `meta`).
        self._devices = ("cpu", "cuda") if self.manifest["target"]["kind"] == "cuda" else ("cpu",)
        self._cuda = "cuda" in self._devices
        # Runtimes' sessions and VMs (TVM's especially) are not re-entrant, and
        # fallback regions run the model's own Python: calls are serialised.
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()  # first calls from several threads load one program
        self._module = module
        self.report = report
        sig = self.manifest.get("signature")
        self.signature = Signature.from_json(sig) if sig else None
        self._dynamic = self.signature is not None and self.signature.dynamic
        # Set by dycl.compile(dynamic="auto"): compiles the model for other input shapes.
        self.specialize: Callable[[list[Any]], CompiledModel] | None = None
        self._specializations: dict[tuple[Any, ...], CompiledModel] = {}
        # Set by dycl.compile: compiles the live model again, with these options (_variant).
        self.recompile: Callable[[list[Any]], CompiledModel] | None = None
        self._variants: list[CompiledModel] = []
        self._eager_model: Any = None
        # Sub-DNNs' shape guards in the signature's named dimensions (`t != 1`).
        self._dim_guards = [(p.name.split(".", 1)[0], g) for p in sorted(self.path.glob("*.dims.json"))
                            for g in json.loads(p.read_text())]
        self._dim_check = compile(" and ".join(f"({g})" for _, g in self._dim_guards), "<dycl dims>", "eval") \
            if self._dim_guards and self._dynamic else None
        params = self.manifest.get("parameters")
        self._parameters = [Parameter.from_json(p) for p in params] if params is not None else None
        spec = self.manifest.get("argument_spec")
        # Calls bind forward's parameters (not tensors, or not all given positionally).
        self._structured = spec is not None and not _positional_tensors(self._parameters, spec) or bool(
            self.manifest.get("mutates_arguments"))
        # forward asks about autograd (`t.requires_grad`, `torch.is_grad_enabled()`): the
        # answers were decided for calls in this grad mode, on inputs that require no grad
        # and were not made in inference mode.
        self._grad_mode: str | None = self.manifest.get("grad_mode")

    # ----------------------------------------------------------------- calling

    def check_inputs(self, inputs: tuple[Any, ...]) -> dict[str, int] | None:
        """An InputError where the inputs do not fit; each named dimension's size
        where the model was compiled for a signature."""
        if self._dynamic:
            assert self.signature is not None
            sizes = self.signature.bind(inputs)
            for i, x in enumerate(inputs):
                if x.device.type not in self._devices:
                    raise InputError(f"input {i}: expected a tensor on {' or '.join(self._devices)}, got one on "
                                     f"{x.device.type}" + (" (a meta tensor holds no data)" if x.device.type == "meta" else ""))
            return sizes
        expected = self.manifest["inputs"]
        if len(inputs) != len(expected):
            raise InputError(f"expected {len(expected)} inputs, got {len(inputs)}")
        for i, (x, e) in enumerate(zip(inputs, expected)):
            want = f"{'x'.join(map(str, e['shape']))} {e['dtype']}"
            if not isinstance(x, torch.Tensor):
                raise InputError(f"input {i}: expected a tensor of {want}, got {type(x).__name__}")
            got = f"{'x'.join(map(str, x.shape))} {str(x.dtype).removeprefix('torch.')}"
            if list(x.shape) != e["shape"] or str(x.dtype).removeprefix("torch.") != e["dtype"]:
                raise InputError(f"input {i}: expected shape/dtype {want}, got {got}")
            if x.device.type not in self._devices:
                raise InputError(f"input {i}: expected a tensor on {' or '.join(self._devices)}, got one on {x.device.type}"
                                 + (" (a meta tensor holds no data)" if x.device.type == "meta" else ""))

    @property
    def program(self) -> Any:
        """The loaded sub-DNNs and host code (loaded on first use: a CUDA artifact
        can be built and saved on a machine without a GPU)."""
        if self._program is not None:
            return self._program
        with self._load_lock:
            if self._program is None:
                self._program = self._load_program()
        return self._program

    def _load_program(self) -> Any:
        if self.manifest["target"]["kind"] == "cuda":
            _require_cuda_runtime()
        try:
            program = self.host.load(str(self.path), model=self._model)
            if self._module is not None and self._model is not None and self.manifest["target"]["kind"] == "llvm":
                for path in self.path.glob("*.guards.json"):
                    name = path.name.split(".", 1)[0]
                    setattr(program, name, _eager_beyond_guards(getattr(program, name), name, self._module,
                                                                self._model))
            return program
        except DyclError:
            raise
        except Exception as e:  # a damaged or tampered-with file: say which artifact, not torch's internals
            first = next((line for line in str(e).splitlines() if line.strip()), "")
            raise DyclError(f"cannot load the compiled model in '{self.path}': {type(e).__name__}: {first}",
                            note="the artifact is damaged or was changed after dycl wrote it; compile it again") from e

    def _signature(self) -> list[tuple[torch.Size, torch.dtype]]:
        if self._expected is None:
            self._expected = [(torch.Size(e["shape"]), getattr(torch, e["dtype"])) for e in self.manifest["inputs"]]
        return self._expected

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._grad_mode is not None and (other := self._autograd_differs(inputs, kwargs)) is not None:
            return other
        if not kwargs and not self._structured and not self._dynamic and self._plain(inputs) and (
                self._guard is None or self._guard.changed() is None):
            # The common call: the compiled shapes, dense CPU tensors, an unchanged model (no
            # generators, no second lookups: 3-4 us a call less on a two-sub-DNN model).
            program = self._program or self.program
            try:
                with self._lock:
                    return to_torch(program(*inputs))
            except RegionMismatch as e:
                if not e.replay:
                    raise
                return self._replay(e, inputs, None)
        if kwargs or self._structured:
            return self._call_arguments(inputs, kwargs)
        return self._call_tensors(inputs)

    def _autograd_differs(self, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The call's result where its grad mode is not the one forward's autograd
        queries were decided for (compiled again for that mode on first use, or the
        model run as eager), or where an input requires grad; else None."""
        mode = current_grad_mode()
        grads = any(isinstance(x, torch.Tensor) and (x.requires_grad or x.is_inference())
                    for x in (*inputs, *kwargs.values()))
        if mode == self._grad_mode and not grads and not self.manifest.get("grad_mode_runs_eager"):
            return None
        if mode != self._grad_mode and not grads and not kwargs and not self._structured and all(type(x) is torch.Tensor for x in inputs):
            other = self._specialization(inputs, None, f"grad mode '{mode}'")
            if other is not None:
                return other(*inputs)
        if grads:
            why = "was compiled for ordinary inputs; calls with an input that requires grad or was made in inference mode"
        elif mode != self._grad_mode:
            why = f"was compiled for calls in grad mode '{self._grad_mode}'; calls in grad mode '{mode}'"
        else:
            why = f"its answers depend on the path taken; calls in grad mode '{mode}'"
        return self._eager(inputs, None, f"forward asks about autograd (requires_grad, is_grad_enabled), and {why}",
                           kwargs, grad=True)

    def _plain(self, inputs: tuple[Any, ...]) -> bool:
        """Dense tensors of exactly the compiled shapes and dtypes, where the program runs."""
        expected = self._expected or self._signature()
        if len(inputs) != len(expected):
            return False
        cuda = self._cuda
        for x, (shape, dtype) in zip(inputs, expected):
            if type(x) is not torch.Tensor or x.dtype != dtype or x.shape != shape or \
                    not (x.is_cpu or cuda and x.is_cuda) or not x.is_contiguous() or x.storage_offset():
                return False
        return True

    def _call_arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """forward's arguments as Python binds them (keywords, defaults, constants,
        lists of tensors); the program's tensors out of them, or the program
        compiled for other constants."""
        params, compiled = self._parameters, self.manifest.get("argument_spec")
        if params is None or compiled is None:
            raise InputError("a compiled model takes its tensor inputs by position"
                             + (f"; got keyword argument(s) {', '.join(sorted(kwargs))}" if kwargs else ""))
        if any(p.kind == "variadic" for p in params) or self.manifest.get("var_positional") and len(args) > sum(
                p.kind == "positional" for p in params):
            return self._call_variadic(params, compiled, args, kwargs)
        if self.manifest.get("var_keyword") and set(kwargs) - {p.name for p in params}:
            return self._eager(args, None, "forward takes **kwargs, and calls with keywords into it", kwargs)
        values = bind(params, args, kwargs, f"{self.manifest.get('model', '')}.forward".lstrip("."))
        if self.manifest.get("mutates_arguments"):
            return self._eager((), {p.name: v for p, v in zip(params, values) if v is not ABSENT},
                               f"forward changes the list or dict argument(s) {', '.join(self.manifest['mutates_arguments'])}, "
                               "which the caller sees; calls")
        try:
            flat, specs = flatten(values)
        except ObjectArgument as e:
            # (`cache=DynamicCache()` where the compile had None: what eager does with it)
            return self._eager((), {p.name: v for p, v in zip(params, values) if v is not ABSENT},
                               f"{e.message}; calls with one")
        if argument_key(specs) == argument_key(compiled):
            return self._call_tensors(tuple(flat), {p.name: v for p, v in zip(params, values) if v is not ABSENT})
        if self.specialize is None:
            raise InputError(f"compiled for {describe(params, compiled)}; called with {describe(params, specs)}",
                             note="compile the model with these arguments as its example inputs")
        other = self._specialization(tuple(flat), {p.name: v for p, v in zip(params, values) if v is not ABSENT},
                                     argument_key(specs))
        assert other is not None
        return other(*args, **kwargs)

    def _call_tensors(self, inputs: tuple[Any, ...], example: dict[str, Any] | None = None) -> Any:
        if self._guard is not None and (change := self._guard.changed()) is not None:
            if self._guard.recompilable and (variant := self._variant(inputs, example)) is not None:
                return variant._call_tensors(inputs, example)
            return self._eager(inputs, example, f"{change} after the compile (the compiled program holds the "
                                                "old value); calls")
        expected = self._expected or self._signature()
        if self._dynamic and example is None and self._parameters is not None and "argument_spec" in self.manifest \
                and (len(inputs) != len(expected) or not all(type(x) is torch.Tensor for x in inputs)):
            return self._call_arguments(inputs, {})  # forward's other parameters, or constants
        # The common case checked without building any message (a few hundred ns).
        if self._dynamic:
            sizes = self.check_inputs(inputs)
            if self._dim_check is not None and not eval(self._dim_check, _SIZE_SCOPE, sizes):  # noqa: S307
                # A size in the declared range that a sub-DNN's build does not hold for
                # (torch.export decided something at it, e.g. a length of 1).
                other = self._specialization(inputs, example)
                if other is not None:
                    return other(*inputs) if example is None else other(**example)
                sub, rule = next((s, g) for s, g in self._dim_guards if not eval(g, _SIZE_SCOPE, dict(sizes)))  # noqa: S307
                shown = ", ".join(f"{k} = {v}" for k, v in sizes.items() if not k.startswith("?"))
                raise InputError(f"sub-DNN {sub} was built for sizes where {rule}, and these inputs have {shown}",
                                 note="compile the model with example inputs of these sizes (a compiled model, "
                                      "unlike a loaded artifact, compiles them on first use)")
        elif len(inputs) != len(expected) or not all(
                type(x) is torch.Tensor and x.shape == shape and x.dtype == dtype and (x.is_cpu or (
                    self._cuda and x.is_cuda))
                for x, (shape, dtype) in zip(inputs, expected)):
            other = self._specialization(inputs, example)
            if other is not None:
                return other(*inputs) if example is None else other(**example)
            if example is None and self._parameters is not None and "argument_spec" in self.manifest and (
                    len(inputs) != len(expected) or not all(type(x) is torch.Tensor for x in inputs)):
                return self._call_arguments(inputs, {})  # forward's other parameters, or constants
            self.check_inputs(inputs)
        if any(x.layout != torch.strided for x in inputs):
            return self._eager(inputs, example, "the program takes dense tensors; calls with a sparse tensor")
        # Backends take dense, aligned buffers: copy strided views and views at an offset.
        args = inputs
        if not all(x.is_contiguous() and not x.storage_offset() for x in inputs):
            if self.manifest.get("layout_sensitive") or self.manifest.get("fallbacks"):
                # (Python regions would get the dense copy: `x.contiguous()` in them is x itself)
                return self._eager(inputs, example)
            args = tuple(x if x.is_contiguous() and not x.storage_offset()
                         else x.clone(memory_format=torch.contiguous_format) for x in inputs)
            versions = [a._version for a in args]
        program = self._program or self.program
        try:
            with self._lock:
                out = to_torch(program(*args))
                if args is not inputs:  # the model's Python updated a copy in place: the caller's tensor, as in eager
                    for x, a, v in zip(inputs, args, versions):
                        if a is not x and a._version != v:
                            with torch.no_grad():
                                x.copy_(a)
                return out
        except RegionMismatch as e:
            if not e.replay:
                raise
            return self._replay(e, inputs, example)

    def _call_variadic(self, params: list[Parameter], compiled: Any, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> Any:
        """forward(self, x, *args, **kwargs): the compiled program takes the example
        call's arguments by position; another call (other constants, another count,
        keywords into **kwargs) runs the model itself, as eager does."""
        try:
            flat, specs = flatten(bind(params, args, kwargs))
        except InputError:
            flat, specs = [], None
        if kwargs or specs is None or argument_key(specs) != argument_key(compiled):
            return self._eager(args, None, "forward takes *args or **kwargs, and calls with other ones than the "
                                           "compile's", kwargs)
        return self._call_tensors(tuple(flat))

    def _replay(self, mismatch: RegionMismatch, inputs: tuple[Any, ...], example: dict[str, Any] | None) -> Any:
        """The call again as eager Python: a fallback region returned what the code
        after it was not compiled for, and the program put back all it had changed."""
        return self._eager(inputs, example, f"{str(mismatch).removeprefix('dycl: ')}; such calls")

    def _eager(self, inputs: tuple[Any, ...], example: dict[str, Any] | None = None,
               why: str = "forward asks for its inputs' memory layout (is_contiguous, stride, ...) and was "
                          "compiled for dense inputs; calls with strided inputs",
               kwargs: dict[str, Any] | None = None, grad: bool = False) -> Any:
        """forward asks for the inputs' strides, and the program was built for dense
        inputs: these run the model itself, as eager does (a FallbackWarning once).
        `grad`: in the caller's grad mode (forward asks about autograd)."""
        with self._lock:
            if self._eager_model is None:
                program = self._program or self.program
                root = getattr(program, "root", None)
                self._eager_model = root if isinstance(root, torch.nn.Module) else self._model \
                    or load_model(str(self.path), self.manifest)
                warnings.warn(FallbackWarning(f"{self.manifest['model']}: {why} run the model as eager Python"),
                              stacklevel=user_stacklevel())
            with contextlib.nullcontext() if grad else torch.no_grad():
                return self._eager_model(*inputs, **(kwargs or {})) if example is None else self._eager_model(**example)

    def _variant(self, inputs: tuple[Any, ...], example: dict[str, Any] | None) -> CompiledModel | None:
        """The model compiled again for what changed since the compile (module state of
        another shape, a buffer forward re-registered, a module's attribute, a torch.nn
        setting): one whose own guard holds, compiled now on first need; None past
        MAX_SPECIALIZATIONS of them, without a live model to compile, or once such a
        compile failed (the calls then run eager, as they did before variants)."""
        if self.recompile is None:
            return None
        with self._lock:
            for variant in self._variants:
                if variant._guard is None or variant._guard.changed() is None:
                    return variant
            if len(self._variants) >= MAX_SPECIALIZATIONS:
                return None
            try:
                variant = self.recompile(list(inputs) if example is None else example)
            except DyclError:
                self.recompile = None  # (not tried again on every call)
                return None
            variant.recompile = None  # (its own changes: this model's next variant)
            self._variants.append(variant)
            return variant

    def _specialization(self, inputs: tuple[Any, ...], example: dict[str, Any] | None = None,
                        arguments: str | None = None) -> CompiledModel | None:
        """The model compiled for these inputs' shapes (compiled now on first use),
        or None where this model does not specialise or the inputs are not tensors.
        `example` is forward's arguments by name where they are not these tensors;
        `arguments` names other constants or structure than the compiled ones."""
        expected = self._signature()
        # Sizes, ranks or dtypes differ (as eager, the model decides what it takes: a dtype
        # its weights do not take raises eager's error, a rank it asserts against its
        # AssertionError); another arity is an input error.
        if self.specialize is None or arguments is None and (len(inputs) != len(expected) or not all(
                type(x) is torch.Tensor and x.device.type in self._devices for x in inputs)):
            return None
        key = (arguments, *((tuple(x.shape), x.dtype, x.device.type) for x in inputs))
        with self._lock:
            found = self._specializations.get(key)
            if found is not None:
                return found
            if len(self._specializations) >= MAX_SPECIALIZATIONS:
                # Not refused: eager's answer, slower (a FallbackWarning says why and what helps).
                differ = "shapes or dtypes" if all(k[0] is None for k in self._specializations) and \
                    arguments is None else "constant arguments, shapes or dtypes"
                why = (f"was already compiled for {MAX_SPECIALIZATIONS} other input {differ} (declare the "
                       f"dimensions that vary: dycl.compile(..., dynamic=True) or signature="
                       f"'{Signature.of_examples(inputs, dynamic=True).text()}'); calls with other ones")
                return _EagerCall(self, why)  # type: ignore[return-value]
            try:
                found = self.specialize(list(inputs) if example is None else example)
            except InputError as e:
                eager = getattr(e, "eager_exception", None)
                if eager is not None:
                    raise eager  # eager PyTorch raises on these inputs: so does the call, the same way
                raise
            self._specializations[key] = found
            return found

    # ------------------------------------------------------------- inspection

    @property
    def module(self) -> Any:
        if self._module is None:
            from xdsl.parser import Parser

            from dycl.compiler import context

            self._module = Parser(context(), (self.path / "module.mlir").read_text()).parse_module()
        return self._module

    @property
    def hcfg(self) -> Any:
        from dycl.hcfg import Hcfg

        return Hcfg.from_module(self.module, subgraphs=self.subgraphs)

    @property
    def fallbacks(self) -> list[dict[str, Any]]:
        """The fallback regions: parts of the model run as its own Python (`loc`,
        `construct`, `reason`, `tensor_op_share`; `specialization` names the input
        shapes of one compiled on first use); empty when all is compiled."""
        out = list(self.manifest.get("fallbacks", []))
        for key, other in list(self._specializations.items()):  # (compiled on first use for other shapes)
            shapes = ", ".join("x".join(map(str, shape)) for shape, _, _ in key[1:])
            out += [{**r, "specialization": shapes} for r in other.fallbacks if r not in out]
        return out

    @property
    def subgraphs(self) -> dict[str, Any]:
        return dict(self.manifest["subgraphs"])

    @property
    def ir_after(self) -> dict[str, str]:
        """The IR after each stage asked for with `dycl.compile(dump_ir=[...])`, in
        pipeline order (empty for a loaded artifact: it is not part of the artifact)."""
        return dict(getattr(self.report, "ir_dumps", {}))

    def save(self, out_dir: str | Path) -> Path:
        """The artifact, in `out_dir`. A model the artifact holds (for fallback
        regions and module state) is written as it is now: the attributes forward
        changed on the calls since the compile (`self.calls += 1`) are eager's.
        A model changed since the compile in a way its calls notice (an optimizer
        step, a new attribute value) is an error: its artifact would be stale."""
        if self._guard is not None and (change := self._guard.changed()) is not None:
            # (the calls run the live model; the artifact would hold the compile's values)
            raise DyclError(f"cannot save: {change} after the compile, and the artifact holds the compiled "
                            "program with the old value", note="compile the model again, then save")
        out = Path(out_dir)
        if out.resolve() != self.path.resolve():
            shutil.copytree(self.path, out, dirs_exist_ok=True)
        saved = self.manifest.get("fallback_model") or {}
        model = self._model if self._model is not None else getattr(self._program, "root", None)
        if saved.get("file") and isinstance(model, torch.nn.Module):
            from dycl.pyregion import model_pickler
            from dycl.runtime.artifact import seal

            torch.save(model, out / saved["file"], pickle_module=model_pickler())
            manifest = json.loads((out / "manifest.json").read_text())
            (out / "manifest.json").write_text(json.dumps(seal(out, manifest), indent=2) + "\n")
        return out


def _positional_tensors(params: list[Parameter] | None, spec: list[Any]) -> bool:
    """The program's inputs are forward's first arguments, the rest left to their
    defaults: a call by position with tensors needs no binding."""
    if params is None:
        return False
    n = sum(1 for s in spec if s == ["tensor"])
    return all(s == ["tensor"] for s in spec[:n]) and all(
        s == ABSENT or (p.constant_default and s == ["constant", type(p.default).__name__, p.default])
        for p, s in zip(params[n:], spec[n:]))


def _require_cuda_runtime() -> None:
    import tvm

    if not tvm.cuda(0).exist:
        raise DyclError("this artifact was built for CUDA, but no CUDA GPU is available here")


def load(path: str | Path) -> CompiledModel:
    """Load a compiled model saved by `CompiledModel.save` or `dycl compile -o`."""
    return CompiledModel(path)
