"""Run C++-host CUDA artifacts (tools/make_gpu_artifacts.py --host cpp) on a GPU machine.

For every artifact under ROOT with `paths/<path>/in<i>.npy`, runs `dycl_model` (no
Python) on each path, compares its outputs with CPU eager's (`want<i>.npy`), and
times it (`--repeat`: inputs are read from host memory and copied to the GPU on
every call, outputs stay there). Needs the TVM runtime libraries on LD_LIBRARY_PATH.

    python tools/gpu_cpp_check.py ROOT [--repeat N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def check(art: Path, repeat: int) -> int:
    failures = 0
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
            print(f"{art.name:14s} {path.name:14s} C++ host {run.stdout.strip()} err {err:.1e}"
                  f"{'' if ok else ' MISMATCH'}", flush=True)
    return failures


def main(root: str, repeat: int = 200) -> int:
    failures = sum(check(a, repeat) for a in sorted(Path(root).iterdir()) if (a / "paths").is_dir())
    return 1 if failures else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 200
    sys.exit(main(args[0], n))
