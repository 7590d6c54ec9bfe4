"""ONNX Runtime backend: torch.onnx (TorchScript exporter) → .onnx → onnxruntime InferenceSession."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import onnx
import torch

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.backends.onnx_nan import keep_nan
from dycl.diagnostics import BackendError

# What torch.onnx.export(..., dynamo=False) itself warns on every call; nothing dycl can act on.
_EXPORT_DEPRECATIONS = (
    r"You are using the legacy TorchScript-based ONNX export",
    r"The feature will be removed\. Please remove usage of this function",
)
# torch.onnx's note on a model without inputs (a sub-DNN that computes constants).
_NO_INPUTS = r"No input args, skipping _decide_input_format"
# The exporter's own warnings that its graph gives wrong values on some inputs
# (advanced indexing with negative indices, index_put/index_add_ with repeated
# indices): dycl cannot prove such inputs never come, so the build is refused.
_WRONG_ON_SOME_INPUTS = r".*(incorrect results|model to be incorrect)"
# The tracer's note on torch.tensor(...): harmless when its arguments are literals.
_TENSOR_CONSTANT = r"torch\.tensor results are registered as constants in the trace"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _tracer_warning(e: BaseException) -> BaseException | None:
    """The TracerWarning (raised as an error) behind an export failure, if any."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, torch.jit.TracerWarning):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _literal_tensor_constants_only(gm: torch.fx.GraphModule) -> bool:
    """No torch.tensor/as_tensor call takes data computed in the graph (a `device=x.device`
    or `dtype=` read from a graph value is fine: the trace holds for any input)."""

    def data_nodes(n: torch.fx.Node) -> list[torch.fx.Node]:
        found: list[torch.fx.Node] = []
        data = n.args[0] if n.args else n.kwargs.get("data")
        torch.fx.node.map_arg(data, found.append)
        return found

    return not any(
        n.op == "call_function" and n.target in (torch.tensor, torch.as_tensor) and data_nodes(n)
        for n in gm.graph.nodes
    )


def export_onnx(spec: SubgraphSpec, path: Path) -> None:
    """Write `spec` to `path` as ONNX with the example inputs' (fixed) shapes.

    Inputs are named in0, in1, … by position; the exporter drops inputs the graph does
    not use, so the loader feeds by these names. Outputs are the returned tuple's
    elements in order (their names are not relied on: the exporter ignores a requested
    name for an output it folds to a constant).

    The export traces the sub-DNN: a TracerWarning means the trace may not hold for
    other inputs, so it fails the build (a clear error, or another backend) instead.
    """
    n_in = len(spec.example_inputs)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=torch.jit.TracerWarning)
        if _literal_tensor_constants_only(spec.graph_module):
            warnings.filterwarnings("ignore", message=_TENSOR_CONSTANT, category=torch.jit.TracerWarning)
        for message in _EXPORT_DEPRECATIONS:
            warnings.filterwarnings("ignore", message=message, category=DeprecationWarning)
        if n_in == 0:
            warnings.filterwarnings("ignore", message=_NO_INPUTS, category=UserWarning)
        warnings.filterwarnings("error", message=_WRONG_ON_SOME_INPUTS, category=UserWarning)
        try:
            torch.onnx.export(
                spec.graph_module,
                tuple(spec.example_inputs),
                str(path),
                dynamo=False,
                input_names=[f"in{i}" for i in range(n_in)],
                dynamic_axes=_dynamic_axes(spec) or None,
                # the exporter's dynamic-axes check needs output names (it misreads an fx graph)
                output_names=[f"out{i}" for i in range(_n_outputs(spec))] if spec.dynamic else None,
            )
        except Exception as e:
            path.unlink(missing_ok=True)
            tracer = _tracer_warning(e)
            reason = f"its trace may not hold for other inputs: {_first_line(tracer)}" if tracer else _first_line(e)
            if isinstance(e, UserWarning):
                reason = f"the ONNX graph would be wrong on some inputs: {_first_line(e)}"
            raise BackendError(f"sub-DNN {spec.name} could not be exported to ONNX: {reason}") from None
    onnx.save(keep_nan(onnx.load(str(path))), str(path))


def _n_outputs(spec: SubgraphSpec) -> int:
    with torch.no_grad():
        out = spec.graph_module(*spec.example_inputs)
    return len(out) if isinstance(out, (tuple, list)) else 1


def _dynamic_axes(spec: SubgraphSpec) -> dict[str, dict[int, str]]:
    axes: dict[str, dict[int, str]] = {}
    for i, k in spec.dynamic:
        axes.setdefault(f"in{i}", {})[k] = f"in{i}_dim{k}"
    return axes


def _check_outputs(spec: SubgraphSpec, path: Path, expected: tuple[Any, ...]) -> None:
    """Load the exported model in onnxruntime and check each output's dtype and shape against eager.

    Catches what an export can get silently wrong for the host: a bool predicate that
    came out as another type, a 0-d result that came out as shape [1], a lost output.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise BackendError(f"onnxruntime cannot load sub-DNN {spec.name}: {_first_line(e)}") from None
    names = {i.name for i in session.get_inputs()}
    feed = {f"in{i}": x.detach().cpu().numpy() for i, x in enumerate(spec.example_inputs) if f"in{i}" in names}
    try:
        got = session.run(None, feed)
    except Exception as e:
        raise BackendError(f"onnxruntime cannot run sub-DNN {spec.name}: {_first_line(e)}") from None
    if len(got) != len(expected):
        raise BackendError(f"sub-DNN {spec.name}: the ONNX model has {len(got)} outputs, expected {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        have = (str(torch.from_numpy(g).dtype), tuple(g.shape))
        want = (str(e.dtype), tuple(e.shape))
        if have != want:
            raise BackendError(
                f"sub-DNN {spec.name}: ONNX output {i} is {have[0]} of shape {list(have[1])}, "
                f"expected {want[0]} of shape {list(want[1])}"
            )


class OnnxRuntimeBackend(Backend):
    name = "onnxruntime"
    runtime_imports = ("onnxruntime", "numpy", "torch")

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        with torch.no_grad():
            try:
                expected = spec.graph_module(*spec.example_inputs)
            except Exception as e:
                reason = _first_line(e)
                raise BackendError(f"sub-DNN {spec.name} does not run on its example inputs: {reason}") from None
        if not isinstance(expected, tuple) or not all(isinstance(t, torch.Tensor) for t in expected):
            raise BackendError(f"sub-DNN {spec.name} must return a tuple of tensors for ONNX export")
        file = f"{spec.name}.onnx"
        export_onnx(spec, out_dir / file)
        try:
            _check_outputs(spec, out_dir / file, expected)
        except BackendError:
            (out_dir / file).unlink(missing_ok=True)  # another backend may build this sub-DNN instead
            raise
        return file

    @staticmethod
    def loader_source() -> str:
        return '''
def load_onnxruntime(path, target):
    import os

    import numpy as np
    import onnxruntime as ort
    import torch

    providers = ["CPUExecutionProvider"]
    if target["kind"] == "cuda" and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only: no per-load notes on stderr
    threads = os.environ.get("DYCL_ORT_NUM_THREADS")
    if threads:  # like TVM_NUM_THREADS; default: onnxruntime's own (one per core)
        if not threads.isdigit() or int(threads) < 1:
            raise ValueError(f"DYCL_ORT_NUM_THREADS must be a positive integer, got {threads!r}")
        options.intra_op_num_threads = int(threads)
    session = ort.InferenceSession(path, options, providers=providers)
    # Inputs are named in<position>; the exporter drops those the graph does not use.
    used = [(int(i.name[2:]), i.name) for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]

    if session.get_providers()[0] == "CUDAExecutionProvider":
        binding = session.io_binding()
        OrtValue = ort.OrtValue

        def ort_value(a):
            if isinstance(a, OrtValue):
                return a
            if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor
                return OrtValue.ortvalue_from_numpy(np.array(a, dtype="float32" if isinstance(a, float) else None))
            return OrtValue.from_dlpack(a)  # torch, TVM, numpy: shares the memory

        def run_cuda(*args):
            # Untested here (no CUDA build of onnxruntime): inputs by DLPack on their device
            # (onnxruntime copies CPU ones over), outputs allocated by onnxruntime on the GPU.
            for i, name in used:
                binding.bind_ortvalue_input(name, ort_value(args[i]))
            for name in outputs:
                binding.bind_output(name, "cuda")
            session.run_with_iobinding(binding)
            # OrtValues stay on the GPU: .numpy() (the host's predicate read) copies to the
            # CPU, __dlpack__ hands them to torch/TVM without a copy.
            return binding.get_outputs()

        run_cuda.session = session
        return run_cuda

    run_session = session.run
    from_numpy = torch.from_numpy
    Tensor = torch.Tensor

    def host_array(a):
        """A numpy view of `a`, without a copy for CPU tensors (torch, TVM, any DLPack)."""
        if isinstance(a, Tensor):
            try:
                return a.numpy()
            except (RuntimeError, TypeError):  # requires grad, or not on the CPU
                return a.detach().cpu().numpy()
        if isinstance(a, np.ndarray):
            return a
        if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor, as in other backends
            return np.array(a, dtype="float32" if isinstance(a, float) else None)
        try:
            return np.from_dlpack(a)
        except (BufferError, RuntimeError, TypeError):  # a DLPack tensor on a device
            return torch.from_dlpack(a).cpu().numpy()

    def run(*args):
        got = run_session(outputs, {name: host_array(args[i]) for i, name in used})
        # torch tensors over onnxruntime's own output buffers (from_numpy: no copy,
        # ~0.3 us each). They have .numpy() for the host's _to_bool/_item, pass through
        # CompiledModel's to_torch untouched and go to TVM or torch sub-DNNs by DLPack.
        # Binding fresh outputs through IOBinding measured slower per call, and reusing
        # bound buffers would let one call overwrite the tensors an earlier call returned.
        return [from_numpy(o) for o in got]

    run.session = session
    return run
'''
