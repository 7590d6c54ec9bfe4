"""The path oracle: the bound a dynamic-network compiler is measured against.

For one input whose path through the network is known in advance, the oracle is
that path's straight-line graph compiled whole by a static compiler: the model
traced on the input (the path's ops only), with every predicate it computed
(`bool(t)`, `t.item()`) kept as an extra output so that its cost stays in,
exported to ONNX and run by ONNX Runtime with I/O binding (inputs and outputs
bound once to preallocated buffers: no per-call allocation or copies). No
dynamic compiler can beat it on that path by more than noise; dycl aims at 0.8
of its speed (`oracle/dycl` >= 0.8 in `tools/bench.py`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch


@contextlib.contextmanager
def _recording_predicates(found: list[torch.Tensor]) -> Iterator[None]:
    """Record every tensor Python asks the truth or value of (the path's predicates)."""
    originals = {name: getattr(torch.Tensor, name) for name in ("__bool__", "item")}

    def recorder(name: str) -> Callable[..., Any]:
        def record(t: torch.Tensor, *args: Any) -> Any:
            found.append(t)
            return originals[name](t, *args)
        return record

    try:
        for name in originals:
            setattr(torch.Tensor, name, recorder(name))
        yield
    finally:
        for name, fn in originals.items():
            setattr(torch.Tensor, name, fn)


class _PathWithPredicates(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.found: list[torch.Tensor] = []

    def forward(self, *xs: torch.Tensor) -> Any:
        self.found.clear()
        with _recording_predicates(self.found):
            out = self.model(*xs)
        leaves, _ = torch.utils._pytree.tree_flatten(out)
        return (*[v for v in leaves if isinstance(v, torch.Tensor)], *[p.reshape(-1) for p in self.found])


class PathOracle:
    """`oracle()` runs the path's graph once; `outputs()` are the model's tensor outputs."""

    def __init__(self, model: torch.nn.Module, inputs: Sequence[torch.Tensor], work: Path):
        import onnxruntime as ort

        from dycl.runtime.loaders.onnxruntime import session_options

        wrapped = _PathWithPredicates(model).eval()
        with torch.no_grad():
            expected = wrapped(*inputs)
        n_outputs = len(expected) - len(wrapped.found)
        path = work / "oracle.onnx"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python values: that is the point here
            torch.onnx.export(wrapped, tuple(inputs), str(path), dynamo=False)
        # The thread pool dycl's sessions share (DYCL_ORT_NUM_THREADS threads): a pool
        # of its own would spin while dycl runs in the same round, and the reverse.
        session = ort.InferenceSession(str(path), session_options(), providers=["CPUExecutionProvider"])
        binding = session.io_binding()
        self._keep = [x.detach().numpy().copy() for x in inputs]  # the bound buffers must outlive the binding
        for spec, x in zip(session.get_inputs(), self._keep):
            binding.bind_cpu_input(spec.name, x)
        self._outputs = []
        for spec, ref in zip(session.get_outputs(), expected):
            value = ort.OrtValue.ortvalue_from_numpy(np.empty(tuple(ref.shape), dtype=ref.detach().numpy().dtype))
            binding.bind_ortvalue_output(spec.name, value)
            self._outputs.append(value)
        self._session, self._binding, self._n_outputs = session, binding, n_outputs
        self.n_predicates = len(expected) - n_outputs

    def __call__(self) -> None:
        self._session.run_with_iobinding(self._binding)

    def outputs(self) -> list[torch.Tensor]:
        self()
        return [torch.from_numpy(v.numpy().copy()) for v in self._outputs[: self._n_outputs]]
