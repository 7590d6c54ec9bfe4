"""Build CUDA artifacts of zoo models here (no GPU needed) for tools/gpu_check.py.

    python tools/make_gpu_artifacts.py OUT_ROOT [--arch sm_90] example [example ...]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import torch

import dycl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("examples", nargs="+")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    for name in args.examples:
        mod = importlib.import_module(name)
        model = mod.make_model()
        out = Path(args.root) / name
        dycl.compile(model, mod.example_inputs(), target="cuda", arch=args.arch, out_dir=out, jobs=args.jobs)
        with torch.no_grad():
            paths = {k: (list(x), model(*x)) for k, x in mod.branch_inputs().items()}
        torch.save({"example": name, "paths": paths}, out / "reference.pt")
        print(f"built {out} ({len(paths)} paths)")


if __name__ == "__main__":
    main()
