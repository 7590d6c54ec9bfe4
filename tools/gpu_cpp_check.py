"""Run C++-host CUDA artifacts (tools/make_gpu_artifacts.py --host cpp) on a GPU machine.

For every artifact under ROOT with `paths/<path>/in<i>.npy`, runs `dycl_model` (no
Python) on each path, compares its outputs with CPU eager's (`want<i>.npy`), and
times it (`--repeat`: inputs are read from host memory and copied to the GPU on
every call, outputs stay there). Needs the TVM runtime libraries on LD_LIBRARY_PATH.

    python tools/gpu_cpp_check.py ROOT [--repeat N] [--python]

--python also times the artifact's Python host on the same inputs, given on the GPU
(needs torch and the TVM runtime's Python package).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def check(art: Path, repeat: int, python: bool = False) -> int:
    failures = 0
    python_host = _load_python_host(art) if python else None
    for path in sorted((art / "paths").iterdir()):
        inputs = sorted(path.glob("in*.npy"), key=lambda p: int(p.stem[2:]))
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([str(art / "dycl_model"), str(art), "-o", out, "--repeat", str(repeat),
                                  *map(str, inputs)], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{art.name:14s} {path.name:14s} FAILED: {run.stderr.strip()[:300]}")
                failures += 1
                continue
            err = 0.0
            for want in sorted(path.glob("want*.npy")):
                got = np.load(Path(out) / f"output_{want.stem[4:]}.npy")
                w = np.load(want)
                err = max(err, float(np.abs(got.astype(np.float64) - w.astype(np.float64)).max()) if w.size else 0.0)
            ok = err <= 1e-4
            failures += not ok
            line = f"{art.name:14s} {path.name:14s} C++ host {run.stdout.strip()} err {err:.1e}"
            if python_host is not None:
                line += f" | Python host, inputs on the GPU: {_python_us(python_host, inputs, True):.1f} us"
                py_err = _python_err(python_host, inputs, sorted(path.glob("want*.npy")))
                ok = ok and py_err <= 1e-4
                line += f", inputs on the CPU: err {py_err:.1e}"
            print(line + ("" if ok else " MISMATCH"), flush=True)
    return failures


def _load_python_host(art: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"host_{art.name}", art / "host.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load(str(art))


def _python_err(program, inputs: list[Path], wants: list[Path]) -> float:
    """The Python host's largest difference from CPU eager, given host-memory inputs."""
    import torch

    out = program(*[torch.from_numpy(np.load(p)) for p in inputs])
    flat = list(out) if isinstance(out, (tuple, list)) else [out]
    return max(float((torch.as_tensor(g).cpu().double() - torch.from_numpy(np.load(w)).double()).abs().max())
               for g, w in zip(flat, wants))


def _python_us(program, inputs: list[Path], gpu: bool, runs: int = 200) -> float:
    """The Python host's mean time per call, synchronized, as the C++ host's --repeat."""
    import time

    import torch

    xs = [torch.from_numpy(np.load(p)) for p in inputs]
    xs = [x.cuda() for x in xs] if gpu else xs
    for _ in range(20):
        program(*xs)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(runs):
        program(*xs)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / runs * 1e6


def main(root: str, repeat: int = 200, python: bool = False) -> int:
    failures = sum(check(a, repeat, python) for a in sorted(Path(root).iterdir()) if (a / "paths").is_dir())
    return 1 if failures else 0


if __name__ == "__main__":
    n = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 200
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a != str(n)]
    sys.exit(main(args[0], n, python="--python" in sys.argv))
