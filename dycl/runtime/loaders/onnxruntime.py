"""Loads an onnxruntime sub-DNN (an `.onnx` file) for the host: an InferenceSession
on the CPU, or with CUDA's execution provider (IOBinding) where there is one.
`DYCL_ORT_NUM_THREADS` sets its intra-op threads."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from dycl.runtime.loaders import scalar_array


def session_options() -> Any:
    """SessionOptions for a dycl session: errors-only logging, and a thread pool that
    stops spinning when `run` returns.

    onnxruntime's workers otherwise spin on after a run, taking the cores from
    whatever runs next: measured here (2 cores), a chain of 8 small conv sessions
    followed by one eager torch conv took 32 ms a call, with this option 1.0 ms
    (the chain alone: 0.79 ms either way). onnxruntime's global thread pool,
    also faster for such chains, is not used: once set, every session in the
    process (the user's own too) must be created for it, or fails to load.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only: no per-load notes on stderr
    options.add_session_config_entry("session.force_spinning_stop", "1")
    threads = os.environ.get("DYCL_ORT_NUM_THREADS")
    if threads:  # like TVM_NUM_THREADS; default: onnxruntime's own (one per core)
        if not threads.isdigit() or int(threads) < 1:
            raise ValueError(f"DYCL_ORT_NUM_THREADS must be a positive integer, got {threads!r}")
        options.intra_op_num_threads = int(threads)
    return options


def load(path: str, target: dict[str, Any]) -> Callable[..., list[Any]]:
    import numpy as np
    import onnxruntime as ort
    import torch

    providers = ["CPUExecutionProvider"]
    if target["kind"] == "cuda" and "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    session = ort.InferenceSession(path, session_options(), providers=providers)
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
                return OrtValue.ortvalue_from_numpy(scalar_array(a))
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

    # The session's C++ run, without the Python wrapper's per-call checks of the feed's
    # names (dycl names them from the session's own inputs): 3-6 us less a call.
    inner = getattr(session, "_sess", None)
    run_session = (lambda names, feed: inner.run(names, feed, None)) if hasattr(inner, "run") else session.run
    # The exporter drops a `clone`: two outputs of one graph value come back as one
    # buffer, and Python code updating one in place would change the other.
    repeated = [k for k, name in enumerate(outputs) if name in outputs[:k]]
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
            return scalar_array(a)
        try:
            return np.from_dlpack(a)
        except (BufferError, RuntimeError, TypeError):  # a DLPack tensor on a device
            return torch.from_dlpack(a).cpu().numpy()

    def run(*args):
        feed = {name: host_array(args[i]) for i, name in used}  # (eager's errors for its inputs, as raised)
        try:
            got = run_session(outputs, feed)
        except Exception as e:
            # onnxruntime's own classes (InvalidArgument, Fail, ...) are no RuntimeError;
            # eager's kernels raise RuntimeError for the same inputs (a max of nothing).
            if isinstance(e, RuntimeError):
                raise
            raise RuntimeError(f"onnxruntime: {str(e).strip() or type(e).__name__}") from e
        # torch tensors over onnxruntime's own output buffers (from_numpy: no copy,
        # ~0.3 us each). They have .numpy() for the host's _to_bool/_item, pass through
        # CompiledModel's to_torch untouched and go to TVM or torch sub-DNNs by DLPack.
        # Binding fresh outputs through IOBinding measured slower per call, and reusing
        # bound buffers would let one call overwrite the tensors an earlier call returned.
        for k in repeated:
            got[k] = got[k].copy()
        return [from_numpy(o) for o in got]

    run.session = session
    return run
