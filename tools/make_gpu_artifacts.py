"""Build CUDA artifacts of zoo models here (no GPU needed) for tools/gpu_check.py.

    python tools/make_gpu_artifacts.py OUT_ROOT [--arch sm_90] [--dynamic 1,2,3,8] [--host cpp] example [example ...]

With --dynamic, each model is compiled once with dynamic=True (the batch dimension
symbolic) and its reference holds every path at each of those batch sizes. With
--host cpp, the C++ host is built too and each path's inputs and CPU-eager outputs
are also written as .npy (`paths/<path>/in<i>.npy`, `want<i>.npy`) for
tools/gpu_cpp_check.py.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np
import torch

import dycl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("examples", nargs="+")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--dynamic", type=lambda v: [int(b) for b in v.split(",")], default=None,
                    help="batch sizes: compile with dynamic=True, check at each of them")
    ap.add_argument("--host", choices=["python", "cpp"], default="python")
    args = ap.parse_args()
    examples = Path(__file__).resolve().parent.parent / "examples"
    sys.path[:0] = [str(examples), str(examples / "paper")]  # (`paper.sdn_resnet56` imports `_common`)
    for name in args.examples:
        mod = importlib.import_module(name)
        model = mod.make_model()
        out = Path(args.root) / name
        dycl.compile(model, mod.example_inputs(), target="cuda", arch=args.arch, out_dir=out, jobs=args.jobs,
                     dynamic=args.dynamic is not None, host=args.host)
        with torch.no_grad():
            paths = {k: (list(x), model(*x)) for k, x in mod.branch_inputs().items()} if args.dynamic is None \
                else _batched(model, mod.branch_inputs(), args.dynamic)
        # The weights too: a model calibrated on data (examples/paper) need not come out
        # bit-identical on another machine's CPU.
        torch.save({"example": name, "paths": paths, "state": model.state_dict()}, out / "reference.pt")
        if args.host == "cpp":
            _save_npy(out / "paths", paths)
        print(f"built {out} ({len(paths)} paths)")


def _save_npy(root: Path, paths: dict) -> None:
    """Each path's inputs and flattened eager outputs as .npy, the C++ host's formats."""
    for k, (inputs, want) in paths.items():
        d = root / k
        d.mkdir(parents=True, exist_ok=True)
        for i, t in enumerate(inputs):
            np.save(d / f"in{i}.npy", t.numpy())
        for i, t in enumerate(_flat(want)):
            np.save(d / f"want{i}.npy", torch.as_tensor(t).numpy())


def _flat(v) -> list:
    return [x for u in v for x in _flat(u)] if isinstance(v, (tuple, list)) else [v]


def _batched(model: torch.nn.Module, paths: dict, batches: list[int]) -> dict:
    """Each path's inputs repeated to each batch size (where eager takes them)."""
    out = {}
    for k, x in paths.items():
        for b in batches:
            xs = [t.repeat(b, *[1] * (t.dim() - 1)) for t in x]
            try:
                out[f"{k}@b{b}"] = (xs, model(*xs))
            except Exception:  # noqa: BLE001 (the model's own Python needs batch 1 there)
                continue
    return out


if __name__ == "__main__":
    main()
