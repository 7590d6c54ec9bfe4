"""Python host vs C++ host: end-to-end latency per model and path, and each host's
overhead per HCFG node (host program + hand-over, excluding the sub-DNNs' compute).

    python -m tools.bench_hosts [--models early_exit,captioner] [--runs 2000] [--json OUT]

Every example is compiled with backend tvm and `host="cpp"`. For each path
(`branch_inputs()`): the Python host (`cm(*x)`, median of `--runs` calls) and the
C++ host (`dycl_model --repeat`, mean per call in its own process, one run per
repetition, median of the repetitions). The sub-DNNs' own time is measured by TVM's
`time_evaluator` (in C++, no Python) on the inputs each received on that path;
overhead per node = (host time - that sum) / sub-DNN calls on the path. All
runtimes use one thread (TVM_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TVM_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ZOO = ["branchy", "early_exit", "shallow_deep", "skipnet", "skipnet_rnn", "blockdrop", "captioner"]


def python_host_us(cm: Any, x: tuple, runs: int) -> float:
    for _ in range(20):
        cm(*x)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        cm(*x)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def cpp_host_us(artifact: Path, files: list[str], runs: int, repeats: int) -> float:
    means = []
    for _ in range(repeats):
        done = subprocess.run([str(artifact / "dycl_model"), str(artifact), "--repeat", str(runs), *files],
                              capture_output=True, text=True, check=True)
        line = next(x for x in done.stdout.splitlines() if "per call" in x)
        means.append(float(line.split("per call")[0].split()[-2]) * _unit(line))
    return statistics.median(means)


def _unit(line: str) -> float:
    return 1e3 if " ms per call" in line else (1e-3 if " ns per call" in line else 1.0)


def sub_dnn_calls(cm: Any, x: tuple) -> list[tuple[str, list[torch.Tensor]]]:
    """The sub-DNNs one call runs on this path, with the inputs each received."""
    from dycl.pyregion import to_torch

    program = cm.program
    calls: list[tuple[str, list[torch.Tensor]]] = []
    originals = {name: getattr(program, name) for name in cm.subgraphs}

    def recorder(name: str, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            calls.append((name, [to_torch(a).clone() if isinstance(to_torch(a), torch.Tensor) else a for a in args]))
            return fn(*args)
        return call

    for name, fn in originals.items():
        setattr(program, name, recorder(name, fn))
    try:
        cm(*x)
    finally:
        for name, fn in originals.items():
            setattr(program, name, fn)
    return calls


def sub_dnn_us(artifact: Path, calls: list[tuple[str, list[Any]]], vms: dict[str, Any]) -> float:
    """Σ of each sub-DNN's own time (TVM time_evaluator, measured in C++)."""
    import tvm
    from tvm.runtime.vm import VirtualMachine

    total = 0.0
    dev = tvm.cpu(0)
    for name, args in calls:
        if name not in vms:
            vms[name] = VirtualMachine(tvm.runtime.load_module(str(artifact / f"{name}.so")), dev)
        vm = vms[name]
        targs = [tvm.runtime.tensor(a.numpy() if isinstance(a, torch.Tensor) else np.array(
            a, dtype="float32" if isinstance(a, float) else None), dev) for a in args]
        timer = vm.time_evaluator("main", dev, number=200, repeat=5)
        total += statistics.median(timer(*targs).results) * 1e6
    return total


def bench(name: str, work: Path, runs: int, repeats: int) -> list[dict[str, Any]]:
    import dycl

    mod = importlib.import_module(name)
    model = mod.make_model()
    art = work / name
    cm = dycl.compile(model, mod.example_inputs(), host="cpp", out_dir=art)
    rows, vms = [], {}
    for path, x in mod.branch_inputs().items():
        files = []
        for i, t in enumerate(x):
            files.append(str(work / f"{name}_{path}_{i}.npy"))
            np.save(files[-1], t.numpy())
        calls = sub_dnn_calls(cm, x)
        compute = sub_dnn_us(art, calls, vms)
        py = python_host_us(cm, x, runs)
        cpp = cpp_host_us(art, files, runs, repeats)
        with torch.no_grad():
            for _ in range(10):
                model(*x)
            t = time.perf_counter()
            for _ in range(runs // 4):
                model(*x)
            eager = (time.perf_counter() - t) / (runs // 4) * 1e6
        n = len(calls)
        rows.append(dict(model=name, path=path, sub_dnn_calls=n, eager_us=eager, python_host_us=py, cpp_host_us=cpp,
                         sub_dnn_us=compute, python_overhead_per_node_us=(py - compute) / n,
                         cpp_overhead_per_node_us=(cpp - compute) / n))
        r = rows[-1]
        print(f"{name:13} {path:15} {n:3} calls  eager {eager:8.1f} us  python {py:8.1f} us  C++ {cpp:8.1f} us  "
              f"sub-DNNs {compute:8.1f} us  overhead/node: python {r['python_overhead_per_node_us']:5.2f} us, "
              f"C++ {r['cpp_overhead_per_node_us']:5.2f} us", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.bench_hosts", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(ZOO))
    p.add_argument("--runs", type=int, default=2000, help="calls per measurement")
    p.add_argument("--repeats", type=int, default=5, help="C++ host processes per path (median of their means)")
    p.add_argument("--json", metavar="OUT")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "examples"))
    torch.set_num_threads(1)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dycl-bench-hosts-") as tmp:
        for name in args.models.split(","):
            rows += bench(name, Path(tmp), args.runs, args.repeats)
    for key in ("python_overhead_per_node_us", "cpp_overhead_per_node_us"):
        values = [r[key] for r in rows]
        print(f"{key}: median {statistics.median(values):.2f} us (min {min(values):.2f}, max {max(values):.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
