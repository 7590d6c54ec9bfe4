"""Loads a TVM-built sub-DNN (a Relax VM executable, `<name>.so`) for the host.

For CUDA, the cubins nvcc built at compile time (`<name>.cuda.json` names them)
are handed to TVM instead of compiling the CUDA source when the module loads, so
the deployment machine needs no CUDA compiler. TVM is imported on first load.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

from dycl.runtime.loaders import scalar_array


def load(path: str, target: dict[str, Any]) -> Callable[..., list[Any]]:
    import tvm
    from tvm.runtime.vm import VirtualMachine

    if target["kind"] == "cuda":
        import ctypes

        # Registers the CUDA device API; the full TVM install loads it itself, a
        # runtime-only install (a deployment machine) does not.
        lib = os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_cuda.so")
        if os.path.exists(lib):
            ctypes.CDLL(lib)
        _use_prebuilt_cubins(path[: -len(".so")] + ".cuda.json")
    dev = tvm.cuda(0) if target["kind"] == "cuda" else tvm.cpu(0)
    vm = VirtualMachine(tvm.runtime.load_module(path), dev)
    main = vm["main"]
    from_dlpack = tvm.runtime.from_dlpack
    native = tvm.runtime.Tensor

    # (Passing torch tensors to `main` as they are, tvm-ffi converting them, measured
    # 0.4 us slower per input than from_dlpack.)
    from math import copysign

    # Host scalars as 0-d tensors, made once per value: tvm.runtime.tensor takes
    # ~13 us, a fifth of a small sub-DNN's call (router's expert index). Relax
    # functions never write their inputs, so one tensor per value can be shared.
    scalars: dict[tuple[type, Any], Any] = {}

    def convert(a):
        if isinstance(a, native):
            return a
        if isinstance(a, (bool, int, float)):  # a host scalar: a 0-d tensor
            key = (type(a), a, copysign(1.0, a))  # -0.0 == 0.0, but 1 / -0.0 is -inf
            t = scalars.get(key)
            if t is None:
                if len(scalars) >= 1024:  # a value per call (a counter, NaN != NaN): keep it bounded
                    scalars.clear()
                t = scalars[key] = tvm.runtime.tensor(
                    scalar_array(a), dev)
            return t
        try:
            return from_dlpack(a)
        except RuntimeError:  # TVM needs 64-byte aligned data; a view at an offset is not
            return from_dlpack(a.clone())

    try:  # one FFI call per output; iterating an Array costs two more each (~1 us apiece)
        from tvm_ffi._ffi_api import ArrayGetItem as get_item
    except ImportError:  # another tvm-ffi: the public, slower way
        def get_item(array, i):
            return array[i]

    arity: list[int] = []  # a Relax function returns as many outputs on every call
    # Outputs that are not buffers of their own, copied on every call: another
    # output's (a dropped clone), an input's (`x * 1` simplified away) or a constant
    # of the module (`torch.zeros(3)`: one buffer for every call). Eager gives each
    # a tensor of its own, which the caller or a fallback region may update in place.
    shared: list[int] = []
    first: list[list[Any]] = []  # the first call's outputs, held until the second

    def compact(a):
        """`a` with canonical strides: a 0-element array from ONNX Runtime or numpy has
        stride 0, and an empty slice of a torch tensor its base's strides, which TVM
        refuses ("expected to be compact array")."""
        import torch

        t = torch.from_dlpack(a) if isinstance(a, native) else a
        if not isinstance(t, torch.Tensor):
            return convert(a)
        fresh = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        if not t.numel():  # (torch gives a (2, 0) tensor strides (1, 1); compact is (0, 1))
            strides = [1] * t.dim()
            for k in range(t.dim() - 2, -1, -1):
                strides[k] = strides[k + 1] * t.shape[k + 1]
            return from_dlpack(fresh.as_strided(t.shape, strides))
        return from_dlpack(fresh.copy_(t))

    def run(*args):
        inputs = [convert(a) for a in args]
        try:
            out = main(*inputs)
        except ValueError as e:  # (checked by TVM only when called: no cost on the common path)
            if "expected to be compact" not in str(e):
                raise
            inputs = [compact(a) for a in args]
            out = main(*inputs)
        if isinstance(out, native):
            out = [out]
            get = list.__getitem__
        else:
            get = get_item
        if len(first) < 2:
            return _learn([get(out, i) for i in range(len(out))], inputs)
        got = [get(out, i) for i in range(arity[0])]
        for k in shared:
            got[k] = got[k].copyto(dev)
        return got

    def _learn(got: list[Any], inputs: list[Any]) -> list[Any]:
        """The first two calls copy every output and find the shared ones: a
        constant has the same buffer on both calls (the first's still held, so
        a fresh one cannot reuse its memory)."""
        # (a size the sub-DNN returns, `out.size(1)`, comes back as a Python int)
        ptrs = [g.data_ptr() if isinstance(g, native) else None for g in got]
        if not first:
            arity.append(len(got))
            held = {a.data_ptr() for a in inputs}
            shared.extend(k for k, p in enumerate(ptrs) if p is not None and (p in ptrs[:k] or p in held))
            first.append(got)
        else:
            shared.extend(k for k, p in enumerate(ptrs)
                          if k not in shared and p is not None and p == first[0][k].data_ptr())
            shared.sort()
            first[0] = []
            first.append([])
        return [g.copyto(dev) if isinstance(g, native) else g for g in got]

    return run


# The prebuilt cubins of every CUDA artifact loaded in this process, by the SHA-256
# of their CUDA source; the compile hook is registered with TVM once.
_CUBINS: dict[str, bytes] = {}
_CUBIN_HOOK: list[Callable[..., Any]] = []


def _use_prebuilt_cubins(index_file: str) -> None:
    """TVM compiles a module's CUDA source when it is loaded; answer with the cubin
    that nvcc built at compile time instead (matched by the source's hash)."""
    import tvm_ffi

    if not os.path.exists(index_file):
        return
    with open(index_file) as f:
        for digest, file in json.load(f).items():
            with open(os.path.join(os.path.dirname(index_file), file), "rb") as b:
                _CUBINS[digest] = b.read()
    if _CUBIN_HOOK:
        return
    fallback = tvm_ffi.get_global_func("tvm_callback_cuda_compile", allow_missing=True)

    def compile_with_prebuilt(code, *rest):
        found = _CUBINS.get(hashlib.sha256(code.encode()).hexdigest())
        if found is not None:
            return found
        if fallback is None:
            raise RuntimeError("no prebuilt cubin for this CUDA module and no CUDA compiler")
        return fallback(code, *rest)

    tvm_ffi.register_global_func("tvm_callback_cuda_compile", compile_with_prebuilt, override=True)
    _CUBIN_HOOK.append(compile_with_prebuilt)
