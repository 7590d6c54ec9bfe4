"""ONNX Runtime backend: torch.onnx (TorchScript exporter) → .onnx → onnxruntime InferenceSession."""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import torch
from torch.fx.passes.shape_prop import ShapeProp
from torch import nn

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.backends.nonnegative_indices import subscripts_are_nonnegative
from dycl.backends.onnx_nan import keep_nan
from dycl.backends.onnx_sigmoid import exact_sigmoid
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
# Of those, advanced indexing by several tensors: right where no index is negative.
_NEGATIVE_INDICES = r".*If indices include negative values"
# The exporter's constant folding leaving a strided Slice unfolded: the graph is right.
_SLICE_NOT_FOLDED = r"Constant folding - Only steps=1 can be constant folded"
# The tracer's note on torch.tensor(...): harmless when its arguments are literals.
_TENSOR_CONSTANT = r"torch\.tensor results are registered as constants in the trace"


@contextlib.contextmanager
def _quiet_export_log() -> Iterator[None]:
    """torch 2.13's TorchScript exporter turns its C++ log on for every export (its
    setup_onnx_logging tests a function object, which is always true) and prints
    the whole graph to stderr when an export fails, although dycl reports the
    failure itself and falls back. Kept off here."""
    try:
        utils = importlib.import_module("torch.onnx._internal.torchscript_exporter.utils")
    except ImportError:  # another torch: nothing to keep off
        utils = None
    original = getattr(utils, "setup_onnx_logging", None)
    if original is None:
        yield
        return

    @contextlib.contextmanager
    def off(verbose: bool) -> Iterator[None]:
        yield

    utils.setup_onnx_logging = off
    try:
        yield
    finally:
        utils.setup_onnx_logging = original


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
        if subscripts_are_nonnegative(spec.graph_module):  # (run-time indices wrapped by check-index-bounds)
            warnings.filterwarnings("ignore", message=_NEGATIVE_INDICES, category=UserWarning)
        warnings.filterwarnings("ignore", message=_SLICE_NOT_FOLDED, category=UserWarning)
        try:
            with _quiet_export_log(), _training_flags_kept(spec.graph_module):
                torch.onnx.export(
                    _for_export(spec.graph_module),
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
    onnx.save(exact_sigmoid(keep_nan(onnx.load(str(path)))), str(path))


def _tile(x: torch.Tensor, *reps: Any) -> torch.Tensor:
    """`x.tile(reps)` as `x.repeat(...)` with the leading 1s tile implies: the
    exporter spells tile with an If on the ranks whose untaken branch holds a
    negative size, which ONNX Runtime's shape inference refuses at load."""
    reps = tuple(reps[0]) if len(reps) == 1 and isinstance(reps[0], (tuple, list, torch.Size)) else reps
    return x.repeat((1,) * (x.dim() - len(reps)) + tuple(reps))


def _index_add(x: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor, alpha: Any = 1) -> torch.Tensor:
    """`x.index_add(dim, index, source)` as a scatter_add: the exporter spells
    index_add as a ScatterElements without reduction, which keeps one of the rows
    a repeated index adds (MoE dispatch adds several tokens' rows to one), and warns."""
    if source.dim() == 0:
        return x.index_add(dim, index, source, alpha=alpha)
    d = dim % source.dim()
    shape = [1] * source.dim()
    shape[d] = -1
    return x.scatter_add(d, index.reshape(shape).expand(source.shape), source if alpha == 1 else source * alpha)


def _index_add_(x: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor, alpha: Any = 1) -> torch.Tensor:
    return x.copy_(_index_add(x, dim, index, source, alpha))  # (in place: the graph reads x after it)


def _export_spelling(n: torch.fx.Node) -> Any:
    """What a node calls instead for the exporter (None: as it is)."""
    if n.op == "call_method" and n.target == "tile" or \
            n.op == "call_function" and n.target in (torch.tile, torch.Tensor.tile):
        return _tile
    if set(n.kwargs) <= {"alpha"} and len(n.args) == 4:
        if n.op == "call_method" and n.target == "index_add" or \
                n.op == "call_function" and n.target in (torch.index_add, torch.Tensor.index_add):
            return _index_add
        if n.op == "call_method" and n.target == "index_add_" or \
                n.op == "call_function" and n.target is torch.Tensor.index_add_:
            return _index_add_
    return None


def _for_export(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm`, or a copy of it (the same modules) whose calls the exporter gets wrong are
    spelled otherwise (tile, index_add)."""
    if not any(_export_spelling(n) is not None for n in gm.graph.nodes):
        return gm
    graph = copy.deepcopy(gm.graph)
    for n in graph.nodes:
        if (spelling := _export_spelling(n)) is not None:
            n.op, n.target = "call_function", spelling
            if "dims" in n.kwargs:  # torch.tile(x, dims=(2, 1))
                n.args, n.kwargs = (*n.args, n.kwargs["dims"]), {}
    return torch.fx.GraphModule(gm, graph)


def _zero_dim_double(gm: torch.fx.GraphModule) -> str | None:
    """The first node of a graph run by ShapeProp that made a 0-d float64 tensor, or None."""
    for n in gm.graph.nodes:
        meta = n.meta.get("tensor_meta")
        if getattr(meta, "dtype", None) == torch.float64 and tuple(getattr(meta, "shape", (1,))) == ():
            op = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", n.name)
            return f"'{op}', node {n.name}"
    return None


def _one_row_mask_assignment(gm: torch.fx.GraphModule) -> str | None:
    """`out[mask] = rows` (dycl.tensor_ops.setitem) whose mask selected 0 or 1 rows in
    the run ShapeProp recorded: the TorchScript exporter then fixes the values'
    shape, and a mask selecting another number of rows fails in ORT's Reshape."""
    from dycl.tensor_ops import setitem

    def meta(a: Any) -> Any:
        return a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None

    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target is not setitem or len(n.args) != 3:
            continue
        index, value = n.args[1], meta(n.args[2])
        masks = [m for m in (index if isinstance(index, (tuple, list)) else [index])
                 if getattr(meta(m), "dtype", None) == torch.bool and len(meta(m).shape) > 0]
        if masks and value is not None and len(value.shape) > 0 and value.shape[0] <= 1:
            return f"a tensor of shape {list(value.shape)} (node {n.name})"
    return None


# Half-precision nodes ONNX Runtime builds as eager computes them: a product or
# quotient computes in float32 in the graph and rounds once (see fx.py), casts convert.
_HALF_EXACT = frozenset({"mul", "truediv", "div", "half", "float", "bfloat16", "to", "type_as", "getitem"})


def _half_precision_node(gm: torch.fx.GraphModule) -> str | None:
    """A node that computes on or yields a float16/bfloat16 tensor (in the run ShapeProp
    recorded) other than a product, quotient or cast: ONNX Runtime's CPU kernels and
    the exporter's scalar handling compute it in float32 (`h >= 0.1` on a half `h`
    compared 0.0999755859375 with 0.1; `h * 0.3333 + 1000.0` kept float32 between ops)."""
    def halves(meta: Any) -> bool:
        metas = [meta] if hasattr(meta, "dtype") else meta if isinstance(meta, (tuple, list)) else []
        return any(getattr(m, "dtype", None) in (torch.float16, torch.bfloat16) for m in metas)

    for n in gm.graph.nodes:
        if n.op not in ("call_function", "call_method", "call_module"):
            continue
        name = str(getattr(n.target, "__name__", n.target)).rsplit(".", 1)[-1]
        inputs = [a.meta.get("tensor_meta") for a in n.all_input_nodes]
        if name not in _HALF_EXACT and (halves(n.meta.get("tensor_meta")) or any(map(halves, inputs))):
            return f"node {n.name}"
    return None


def _empty_index_assignment(gm: torch.fx.GraphModule) -> str | None:
    """`out[idx] = v` / `out[idx] += v` (dycl.tensor_ops.setitem) whose index tensor
    had no elements in the run ShapeProp recorded: torch's TorchScript exporter
    divides by that size and the process dies (SIGFPE), taking the caller down."""
    from dycl.tensor_ops import setitem

    def empty(a: Any) -> bool:
        m = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
        return m is not None and 0 in tuple(m.shape)

    for n in gm.graph.nodes:
        if n.op == "call_function" and (n.target is setitem or "index_put" in str(n.target)) and len(n.args) >= 2:
            index = n.args[1]
            if any(empty(i) for i in (index if isinstance(index, (tuple, list)) else [index])):
                return f"node {n.name}"
    return None


@contextlib.contextmanager
def _training_flags_kept(root: nn.Module) -> Iterator[None]:
    """The exporter restores only the root's mode, with `train()`, which sets every
    submodule to it: the user's own submodules (installed in the sub-DNN's graph
    module, which is in eval mode) came out of a compile in eval mode."""
    flags = [(m, m.training) for m in root.modules()]
    try:
        yield
    finally:
        for m, training in flags:
            m.training = training


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

    from dycl.runtime.loaders.onnxruntime import session_options

    try:
        session = ort.InferenceSession(str(path), session_options(), providers=["CPUExecutionProvider"])
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
    loader = "dycl.runtime.loaders.onnxruntime:load"

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        # (FX prints the traceback of a failing call itself: the reason goes into the note)
        # One run gives the expected outputs and each node's dtype and shape (a copy of
        # the graph records them, sharing the sub-DNN's modules).
        recorded = torch.fx.GraphModule(spec.graph_module, copy.deepcopy(spec.graph_module.graph))
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            try:
                expected = ShapeProp(recorded).propagate(*spec.example_inputs)
            except Exception as e:
                reason = _first_line(e)
                raise BackendError(f"sub-DNN {spec.name} does not run on its example inputs: {reason}") from None
        if not isinstance(expected, tuple) or not all(isinstance(t, torch.Tensor) for t in expected):
            raise BackendError(f"sub-DNN {spec.name} must return a tuple of tensors for ONNX export")
        if (where := _zero_dim_double(recorded)) is not None:
            # The TorchScript exporter casts a 0-d float64 value to float32 before an op
            # with a scalar (`p.max() >= 0.9` on a double `p` compared in float32).
            raise BackendError(f"sub-DNN {spec.name} computes a 0-d float64 value ({where}), which the ONNX "
                               "export computes in float32")
        if (where := _one_row_mask_assignment(recorded)) is not None:
            raise BackendError(f"sub-DNN {spec.name} assigns {where} through a boolean mask selecting at most one "
                               "row here; the ONNX export keeps that count (other counts fail in Reshape)")
        if target.kind == "llvm" and (where := _half_precision_node(recorded)) is not None:
            raise BackendError(f"sub-DNN {spec.name} computes in float16/bfloat16 ({where}), which ONNX Runtime's "
                               "CPU kernels compute in float32 (other than products, quotients and casts)")
        if (where := _empty_index_assignment(recorded)) is not None:
            raise BackendError(f"sub-DNN {spec.name} assigns through an index tensor with no elements ({where}), "
                               "which crashes torch's ONNX exporter")
        file = f"{spec.name}.onnx"
        export_onnx(spec, out_dir / file)
        try:
            _check_outputs(spec, out_dir / file, expected)
        except BackendError:
            (out_dir / file).unlink(missing_ok=True)  # another backend may build this sub-DNN instead
            raise
        return file
